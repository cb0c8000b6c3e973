export interface Server {
  id: string;
  orgId: string;
  name: string;
  regionId: string;
  zoneId: string;
  createdAt: Date;
  deletedAt: Date | null;
}
